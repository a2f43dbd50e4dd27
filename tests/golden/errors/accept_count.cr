C = #"a"
accept C
