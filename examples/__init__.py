"""The specs and input frames that ship with sfdf (package data; README, "A tour of the spec")."""
