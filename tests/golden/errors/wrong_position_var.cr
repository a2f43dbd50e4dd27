D = k mod 2 == 0
