D = i mod 0 == 0
