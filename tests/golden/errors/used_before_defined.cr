D = C > 1
C = #"a"
