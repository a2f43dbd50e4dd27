B = "a"
accept B
accept !B
