"""What a new user meets first: `/` leads to the API docs, Swagger UI asks nothing of the outside,
and the boot line does not pretend an empty password is a secret."""

from backend.config import Config


def test_the_root_redirects_to_the_api_docs(client):
    answer = client.simulate_get("/")
    assert answer.status_code == 302
    assert answer.headers["location"].endswith("/api/docs")


def test_swagger_ui_sends_no_request_to_an_outside_validator(client):
    script = client.simulate_get("/api/docs/init.js").text
    assert "validatorUrl: null" in script


def test_the_boot_line_masks_only_a_password_that_exists():
    described = Config(database_url="postgresql://postgres:@/vitrine?host=/x",
                       redis_url="redis://user:s3cret@redis.example:6379/0").describe()
    assert described["database_url"] == "postgresql://postgres:@/vitrine?host=/x"
    assert described["redis_url"] == "redis://user:***@redis.example:6379/0"
