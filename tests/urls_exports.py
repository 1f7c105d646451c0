"""The app's URLs plus the export download, for the export view tests until urls.py has it."""

from django.urls import include, path

from audit.urls import audit_patterns
from audit.urls import urlpatterns as app_urlpatterns
from audit.views import exports

urlpatterns = [
    path(
        "",
        include(
            (
                [
                    *audit_patterns,
                    path("sets/<int:pk>/export/<str:fmt>/", exports.set_export, name="set-export"),
                ],
                "audit",
            )
        ),
    ),
    *app_urlpatterns[1:],
]
