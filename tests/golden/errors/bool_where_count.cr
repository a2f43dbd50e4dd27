B = "a"
D = B + 1 > 0
