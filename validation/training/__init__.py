"""Training a group of seeds of one configuration together: the loop, the optimizer step and the
device."""
