"""Ray's Jobs REST API and the entrypoint of a lane run as a Ray job; no `ray` import (see jobs_api)."""
