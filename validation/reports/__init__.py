"""What the stored runs say: statistics over seeds and test inputs, and the reports (markdown and
plots) of length generalization, the arithmetic claims and the depth experiments."""
