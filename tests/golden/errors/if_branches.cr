C = #"a"
D = (C if "a" else "b") > 0
