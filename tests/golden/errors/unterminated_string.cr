A = #"a
