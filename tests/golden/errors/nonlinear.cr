C = #"a"
D = C * C > 0
