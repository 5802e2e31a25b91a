"""sfdf hdl layer (see ../shared/DESIGN.md); filled in by later issues."""
