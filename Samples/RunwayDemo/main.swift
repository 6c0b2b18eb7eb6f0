print("runway-demo")
