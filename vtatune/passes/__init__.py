"""VTA lowering passes: one module per pass, composed in ``pipeline``."""
