C = #"a"
C = #"b"
D = C > 0
