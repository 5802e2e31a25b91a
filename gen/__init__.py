"""sfdf generator: spec -> validated model -> analysis -> reference model; the `sfdf` CLI."""
