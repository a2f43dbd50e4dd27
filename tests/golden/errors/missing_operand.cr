C = #"a" +
D = C > 1
