C = #"a"
D = #C > 0
