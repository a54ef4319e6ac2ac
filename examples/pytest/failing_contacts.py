"""The failing variant of ``test_contacts.py`` (not collected by ``pytest examples/pytest``; run it
by name): the contact saved is not the one the test expects, so the test fails and its output
names the session and the HTML report of what the phone did.

    pytest examples/pytest/failing_contacts.py --artemis-device sim"""

from __future__ import annotations

from artemis_cli import Phone


def test_saved_contact_has_the_expected_name(phone: Phone) -> None:
    phone.launch("Contacts")
    phone.tap("Create contact")
    phone.type("First name", "Sofia")
    phone.tap("Save")
    assert phone.sees("Sofia Ortega"), "the saved contact should read Sofia Ortega"
