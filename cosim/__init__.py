"""sfdf cosim layer (see ../shared/DESIGN.md); filled in by later issues."""
