"""Factories for the third-party LangGraph Python savers that ci/ecosystem
judges: each gives a saver over fresh, empty, isolated storage per call,
for `python -m checkpointkit_bridge serve ecofactories.MODULE:fresh`.

Servers come from the environment that ci/ecosystem exports:
CHECKPOINTKIT_MYSQL_URI (MariaDB), CHECKPOINTKIT_REDIS_URL and
CHECKPOINTKIT_POSTGRES_DSN. A factory only builds the saver the way its
README shows; it never patches or wraps the saver's methods (Django's
database routing is the one exception, explained in django_saver.py).
"""
