B = "a"
accept B
next "a" = B
