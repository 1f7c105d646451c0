"""Where tasks queued before they moved beside what they run are found: a queued row
names its task by this module's path, so these names stay for rows still waiting."""

from audit.services.jobs import run_job
from audit.services.webhooks import deliver_webhook

__all__ = ["deliver_webhook", "run_job"]
