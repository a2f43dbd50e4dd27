C = #"a"
D = Cc > 1
