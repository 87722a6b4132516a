"""Reports rendered with jinja2."""
