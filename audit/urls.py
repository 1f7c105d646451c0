from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from audit.views import answers, sets

audit_patterns = [
    path("", sets.home, name="home"),
    path("sets/", sets.set_list, name="set-list"),
    path("sets/new/", sets.set_create, name="set-create"),
    path("sets/<int:pk>/", sets.set_detail, name="set-detail"),
    path("sets/<int:pk>/labels/", sets.label_distribution, name="label-distribution"),
    path("import/", sets.answers_upload, name="import"),
    path("answers/<int:pk>/", answers.answer_detail, name="answer-detail"),
]

urlpatterns = [
    path("", include((audit_patterns, "audit"))),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
