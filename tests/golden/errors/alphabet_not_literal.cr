alphabet {"a", b}
D = "a"
