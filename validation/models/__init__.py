"""The models trained here (a GPT-2-style decoder or encoder, Duan et al.'s encoder-decoder), their
layers and attention biases, and the one place that builds and loads them."""
