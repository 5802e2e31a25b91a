"""sfdf host side: the device API over a simulated or a board device, the frame codec, the Spark job (README, "Host side")."""
