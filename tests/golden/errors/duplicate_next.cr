B = "a"
next "a" = B
next "a" = !B
