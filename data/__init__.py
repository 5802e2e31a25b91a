"""Data sets that ship with sfdf (package data): the UCI digits of the demo (digits/README.md)."""
