"""kafkacodec's code generator: .ksy schemas -> IR -> Jinja2 templates -> generated/.

Only developers run it (`kafkacodec generate`); nothing imports it at run time.
"""

from .render import GENERATED_DIR, SCHEMA_DIR, check, generate, render_all

__all__ = ["generate", "check", "render_all", "SCHEMA_DIR", "GENERATED_DIR"]
