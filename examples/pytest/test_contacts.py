"""An example of Artemis under pytest (docs/python.md): each test gets a ``phone`` fixture, one
recorded session named after the test.

    pytest examples/pytest --artemis-device sim     # then: artemis sessions list

``failing_contacts.py`` next to it is the same kind of test failing on purpose (run it by name):
its output names the session and the report to open."""

from __future__ import annotations

from artemis_cli import Phone


def test_add_a_contact(phone: Phone) -> None:
    phone.launch("Contacts")
    phone.tap("Create contact")
    phone.type("First name", "Sofia")
    phone.type("Last name", "Ortega")
    phone.type("Phone", "+1 555-0199")
    phone.tap("Save")  # the editor's Save: its effect is observed, or StepFailed says what happened
    phone.wait_for("Sofia Ortega")
    assert phone.sees("+1 555-0199")


def test_search_finds_one_contact(phone: Phone) -> None:
    phone.launch("Contacts")
    phone.type("Search contacts", "Kenji")
    screen = phone.screen()
    assert screen.find("Kenji Mori") is not None
    assert screen.find("Alice Anderson") is None


def test_back_returns_to_the_list(phone: Phone) -> None:
    phone.launch("Contacts")
    phone.tap("Carla Diaz")
    assert phone.sees("carla@example.com")
    phone.tap(desc="Navigate up")
    assert phone.sees("Create contact")
