C = #"a"
D = C && "b"
