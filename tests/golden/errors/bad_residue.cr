D = i mod 3 in {0, 4}
