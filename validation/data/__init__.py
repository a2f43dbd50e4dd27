"""From a task to tensors: its encoding into ids and batches, its test sets, and the streams of
training examples of each seed."""
