"""Writes the frozen bench suite ``tasks/bench/*.yaml`` (run once; the YAML is what is committed).

    python -m artemis_cli.bench.generate_suite tasks/bench
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

Action = dict[str, Any]

ALARMS = [  # (hour, minute, am/pm, label)
    (5, 30, "am", "Run"), (6, 10, "am", "Feed the cat"), (6, 45, "am", "Stretch"), (7, 5, "am", "Vitamins"),
    (8, 15, "am", "Standup"), (9, 50, "am", "Water break"), (10, 40, "am", "Coffee break"),
    (12, 30, "pm", "Lunch"), (2, 45, "pm", "Pick up kids"), (4, 20, "pm", "Water plants"),
    (6, 55, "pm", "Cook dinner"), (10, 15, "pm", "Lights out"),
]


def alarm_steps(hour: int, minute: int, half: str, label: str) -> list[Action]:
    return [
        {"tap": {"desc": "Add alarm"}},
        {"type": {"text": str(hour), "into": {"id": "hour"}}},
        {"type": {"text": f"{minute:02d}", "into": {"id": "minute"}}},
        {"tap": {"id": f"{half}_label"}},
        {"type": {"text": label, "into": {"id": "label_input"}}},
        {"tap": {"text": "OK"}},
    ]


def h24(hour: int, half: str) -> int:
    return (hour % 12) + (12 if half == "pm" else 0)


def alarm_check(hour: int, minute: int, half: str, label: str) -> dict[str, Any]:
    return {"shell": f"content query --uri content://com.android.deskclock/alarms --where \"label='{label}'\"",
            "contains": f"hour={h24(hour, half)}, minutes={minute}, enabled=1, label={label},"}


def _network_switches() -> list[Action]:
    return [
        {"tap": {"text": "Network & internet"}},
        {"tap": {"id": "wifi_switch"}},
        {"tap": {"id": "airplane_switch"}},
        {"tap": {"id": "mobile_data_switch"}},
        {"key": "back"},
    ]


def _bluetooth_switch() -> list[Action]:
    return [{"tap": {"text": "Connected devices"}}, {"tap": {"id": "bluetooth_switch"}}, {"key": "back"}]


def settings_round() -> list[Action]:
    display: list[Action] = [{"tap": {"text": "Display"}}, {"tap": {"id": "dark_theme_switch"}}, {"key": "back"}]
    return [*_network_switches(), *display, *_bluetooth_switch()]


#: The Clock asks for notifications on its first launch (sim/permissions.py); these tasks are not about that.
CLOCK_GRANT = {"shell": "pm grant com.android.deskclock android.permission.POST_NOTIFICATIONS"}
SETTINGS_SETUP = [
    {"shell": "settings put global wifi_on 1"},
    {"shell": "settings put global airplane_mode_on 0"},
    {"shell": "settings put global mobile_data 1"},
    {"shell": "settings put secure ui_night_mode 1"},
    {"shell": "settings put global bluetooth_on 0"},
    {"shell": "am force-stop com.android.settings"},
]


def settings_checks(rounds: int) -> list[dict[str, Any]]:
    odd = rounds % 2 == 1
    return [
        {"shell": "settings get global wifi_on", "equals": "0" if odd else "1"},
        {"shell": "settings get global airplane_mode_on", "equals": "1" if odd else "0"},
        {"shell": "settings get global mobile_data", "equals": "0" if odd else "1"},
        {"shell": "settings get secure ui_night_mode", "equals": "2" if odd else "1"},
        {"shell": "settings get global bluetooth_on", "equals": "1" if odd else "0"},
    ]


NEW_CONTACTS = [
    ("Paula", "Reyes", "+1 555-0301"), ("Quentin", "Ross", "+1 555-0302"), ("Rosa", "Silva", "+1 555-0303"),
    ("Samuel", "Tan", "+1 555-0304"), ("Tara", "Usman", "+1 555-0305"), ("Uma", "Varga", "+1 555-0306"),
    ("Victor", "Wells", "+1 555-0307"), ("Wendy", "Xu", "+1 555-0308"), ("Xavier", "Young", "+1 555-0309"),
    ("Yara", "Zane", "+1 555-0310"),
]
DELETE_CONTACTS = ["Alice Anderson", "Ben Brooks", "Carla Diaz", "David Evans", "Emma Fischer", "Farid Haddad"]


def contacts_task() -> dict[str, Any]:
    ref: list[Action] = []
    for first, last, phone in NEW_CONTACTS:
        ref += [
            {"tap": {"desc": "Create contact"}},
            {"type": {"text": first, "into": {"id": "first_name"}}},
            {"type": {"text": last, "into": {"id": "last_name"}}},
            {"type": {"text": phone, "into": {"id": "phone"}}},
            {"tap": {"text": "Save"}},
            {"key": "back"},
        ]
    for name in DELETE_CONTACTS:
        ref += [{"tap": {"desc": name}}, {"tap": {"id": "menu_delete"}}, {"tap": {"id": "button1"}}]
    ref.append({"finish": {"success": True, "answer": "10 contacts added, 6 deleted"}})
    success: list[dict[str, Any]] = [
        {"shell": "content query --uri content://com.android.contacts/contacts | wc -l", "equals": "19"}]
    success += [{"shell": f"content query --uri content://com.android.contacts/contacts --where "
                          f"\"display_name='{f} {la}'\"", "contains": f"phone={p}"} for f, la, p in NEW_CONTACTS]
    success += [{"shell": f"content query --uri content://com.android.contacts/contacts --where "
                          f"\"display_name='{n}'\"", "equals": "No result found."} for n in DELETE_CONTACTS]
    return {
        "id": "bench-contacts-churn",
        "goal": "In Contacts, add these ten people with their phone numbers: "
                + "; ".join(f"{f} {la} {p}" for f, la, p in NEW_CONTACTS)
                + ". Then delete " + ", ".join(DELETE_CONTACTS) + ".",
        "description": "Ten contacts created through the editor, then six seed contacts deleted.",
        "app": "com.android.contacts",
        "max_steps": len(ref) + 30,
        "device": "sim",
        "sim": {"world": "default", "seed": 41, "popups": False},
        "tags": ["bench", "contacts", "long"],
        "setup": [{"shell": "am force-stop com.android.contacts"}],
        "success": success,
        "reference": ref,
    }


def clock_task() -> dict[str, Any]:
    ref: list[Action] = [{"tap": {"desc": "7:30 AM alarm"}}]
    for a in ALARMS:
        ref += alarm_steps(*a)
    ref.append({"finish": {"success": True, "answer": "Wake up is off and twelve alarms are set"}})
    return {
        "id": "bench-clock-alarm-week",
        "goal": "In the Clock app switch off the 7:30 AM alarm, then create twelve alarms: "
                + "; ".join(f"{h}:{m:02d} {x.upper()} {lab}" for h, m, x, lab in ALARMS) + ".",
        "description": "Twelve alarms through the Set alarm picker (six steps each).",
        "app": "com.android.deskclock",
        "max_steps": len(ref) + 30,
        "device": "sim",
        "sim": {"world": "default", "seed": 12, "popups": False},
        "tags": ["bench", "clock", "typing", "long"],
        "setup": [{"shell": "am force-stop com.android.deskclock"}, CLOCK_GRANT],
        "success": [
            {"shell": "content query --uri content://com.android.deskclock/alarms | wc -l", "equals": "14"},
            {"shell": "content query --uri content://com.android.deskclock/alarms --where \"label='Wake up'\"",
             "contains": "hour=7, minutes=30, enabled=0"},
            *[alarm_check(*a) for a in ALARMS],
        ],
        "reference": ref,
    }


def settings_task(rounds: int = 9) -> dict[str, Any]:
    ref: list[Action] = []
    for _ in range(rounds):
        ref += settings_round()
    ref.append({"finish": {"success": True, "answer": f"toggled every switch {rounds} times"}})
    return {
        "id": "bench-settings-marathon",
        "goal": f"Settings stress test: {rounds} times in a row, toggle Wi-Fi, Airplane mode and Mobile data "
                "in Network & internet, Dark theme in Display and Bluetooth in Connected devices, going "
                "back to the main Settings list after each screen.",
        "description": "Fifty-five toggles over three Settings screens, revisited nine times.",
        "app": "com.android.settings",
        "max_steps": len(ref) + 30,
        "device": "sim",
        "sim": {"world": "default", "seed": 5, "popups": False},
        "tags": ["bench", "settings", "revisit", "long"],
        "setup": SETTINGS_SETUP,
        "success": settings_checks(rounds),
        "reference": ref,
    }


SHOP_ITEMS = [("USB-C Cable", 4, 0), ("Power Bank", 2, 1), ("Desk Lamp", 3, 2), ("Coffee Mug", 6, 2),
              ("Notebook", 8, 3), ("Gel Pens", 5, 3), ("Sticky Notes", 5, 4), ("USB Flash Drive", 2, 5),
              ("Mouse Pad", 4, 6), ("Travel Adapter", 2, 8), ("Umbrella", 3, 9), ("Lunch Box", 4, 9)]
PRICES = {"USB-C Cable": 9.99, "Power Bank": 29.99, "Desk Lamp": 27.99, "Coffee Mug": 11.99, "Notebook": 4.99,
          "Gel Pens": 6.99, "Sticky Notes": 3.99, "USB Flash Drive": 12.99, "Mouse Pad": 8.99,
          "Travel Adapter": 23.99, "Umbrella": 16.99, "Lunch Box": 13.99}
SWIPE = {"swipe": {"from": [540, 1900], "to": [540, 1020]}}
#: The Shop tasks' credentials: the goal names the username, the password is this secret (its value
#: comes from $ARTEMIS_SECRET_SHOP_PASSWORD, never from the task file).
SHOP_SECRETS = {"shop_password": "the demo account's password"}


def shop_task() -> dict[str, Any]:
    ref: list[Action] = [
        {"type": {"text": "demo", "into": {"id": "username"}}},
        {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
    ]
    page = 0
    for name, qty, at in SHOP_ITEMS:
        while page < at:
            ref.append(SWIPE)
            page += 1
        ref += [{"tap": {"desc": f"Add {name} to cart"}}] * qty
    ref += [{"tap": {"id": "cart_button"}}, {"tap": {"text": "Checkout"}}]
    items = sum(q for _, q, _ in SHOP_ITEMS)
    total = round(sum(PRICES[n] * q for n, q, _ in SHOP_ITEMS), 2)
    products = "; ".join(f"{n} x{q}" for n, q, _ in SHOP_ITEMS)
    ref.append({"finish": {"success": True, "answer": f"Order placed: {items} items, total ${total:.2f}"}})
    return {
        "id": "bench-shop-restock",
        "goal": "Log in to the Shop with the demo account (username demo) and order: "
                + ", ".join(f"{q} {n}" for n, q, _ in SHOP_ITEMS) + ". Check out when the cart is complete.",
        "secrets": SHOP_SECRETS,
        "description": "Twelve products found by scrolling the whole catalogue; promotion pop-ups on.",
        "app": "com.artemis.shop",
        "max_steps": len(ref) + 40,
        "device": "sim",
        "sim": {"world": "default", "seed": 64, "popups": True},
        "tags": ["bench", "shop", "login", "scrolling", "popups", "long"],
        "setup": [{"shell": "am force-stop com.artemis.shop"}],
        "success": [
            {"shell": "content query --uri content://com.artemis.shop/orders",
             "contains": f"items={items}, total={total:.2f}, products={products}"},
            {"visible": "Thank you for your order!"},
        ],
        "reference": ref,
    }


JOURNAL = [("Monday", "Call the plumber about the kitchen tap"), ("Tuesday", "Dentist at 4 pm"),
           ("Wednesday", "Pay the electricity bill"), ("Thursday", "Book train tickets to Lyon"),
           ("Friday", "Team dinner at Casa Verde"), ("Saturday", "Farmers market and laundry"),
           ("Sunday", "Call grandma")]


def notes_task() -> dict[str, Any]:
    """Writes a week of notes, revisits each to copy it into the agent's own notes (save_note),
    looks up a contact's number in Contacts, and comes back to write a summary note."""
    ref: list[Action] = [{"launch": "com.artemis.notes"}]
    for day, text in JOURNAL:
        ref += [
            {"tap": {"text": "New note"}},
            {"type": {"text": day, "into": {"id": "title"}}},
            {"type": {"text": text, "into": {"id": "body"}}},
            {"tap": {"desc": "Save note"}},
        ]
    for day, text in JOURNAL:  # revisit every note written above
        ref += [{"tap": {"desc": day}}, {"note": {"key": f"plan-{day.lower()}", "content": text}}, {"key": "back"}]
    for seed_title in ("Groceries", "Meeting notes", "Ideas"):
        ref += [{"tap": {"desc": seed_title}}, {"key": "back"}]
    ref += [
        {"launch": "com.android.contacts"},
        {"tap": {"desc": "Kenji Mori"}},
        {"note": {"key": "kenji-phone", "content": "+1 555-0111"}},
        {"key": "back"},
        {"launch": "com.artemis.notes"},
        {"tap": {"text": "New note"}},
        {"type": {"text": "Week plan", "into": {"id": "title"}}},
        {"type": {"text": "Plumber Monday, dentist Tuesday, bills Wednesday; ask Kenji +1 555-0111",
                  "into": {"id": "body"}}},
        {"tap": {"desc": "Save note"}},
    ]
    for day, _ in JOURNAL[:4]:  # second revisit: re-open and close four of them
        ref += [{"tap": {"desc": day}}, {"key": "back"}]
    ref.append({"finish": {"success": True, "answer": "Week notes written and summarised"}})
    success = [{"shell": f"content query --uri content://com.artemis.notes/notes --where \"title='{d}'\"",
                "contains": f"body={t}"} for d, t in JOURNAL]
    success += [{"shell": "content query --uri content://com.artemis.notes/notes --where \"title='Week plan'\"",
                 "contains": "ask Kenji +1 555-0111"},
                {"shell": "content query --uri content://com.artemis.notes/notes | wc -l", "equals": "11"}]
    return {
        "id": "bench-notes-revisit",
        "goal": "Write one note per weekday: " + "; ".join(f'"{d}": "{t}"' for d, t in JOURNAL)
                + ". Then re-open each of them and keep its text in your own notes, glance at the three older "
                "notes, look up Kenji Mori's number in Contacts, and write a \"Week plan\" note that "
                "summarises the week and ends with \"ask Kenji\" and his number.",
        "description": "Revisits earlier screens and writes notes (save_note); a contact fact reused later.",
        "app": "com.artemis.notes",
        "max_steps": len(ref) + 30,
        "device": "sim",
        "sim": {"world": "default", "seed": 9, "popups": False},
        "tags": ["bench", "notes", "contacts", "revisit", "save_note", "long"],
        "setup": [{"shell": "am force-stop com.artemis.notes"}, {"shell": "am force-stop com.android.contacts"}],
        "success": success,
        "reference": ref,
    }


def recall_task(seed: int = 31, rounds: int = 13) -> dict[str, Any]:
    """Places an order first; the order number shown then is needed ~200 steps later."""
    order = f"ART-{10000 + (seed % 5000) * 10 + 1}"
    ref: list[Action] = [
        {"type": {"text": "demo", "into": {"id": "username"}}},
        {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
        {"tap": {"desc": "Add USB-C Cable to cart"}},
        {"tap": {"desc": "Add Phone Case to cart"}},
        {"tap": {"id": "cart_button"}},
        {"tap": {"text": "Checkout"}},
        {"key": "home"},
        {"launch": "com.android.settings"},
    ]
    for _ in range(rounds):
        ref += settings_round()
    ref += [{"key": "home"}, {"launch": "com.android.deskclock"}]
    for a in ALARMS[:8]:
        ref += alarm_steps(*a)
    ref += [
        {"key": "home"},
        {"launch": "com.artemis.notes"},
        {"tap": {"text": "New note"}},
        {"type": {"text": "Order to track", "into": {"id": "title"}}},
        {"type": {"text": f"Shop order {order}, USB-C Cable and Phone Case", "into": {"id": "body"}}},
        {"tap": {"desc": "Save note"}},
        {"finish": {"success": True, "answer": f"Done; the order number is {order}"}},
    ]
    return {
        "id": "bench-long-recall",
        "goal": "Order one USB-C Cable and one Phone Case in the Shop (username demo) and check out. "
                f"Then do the Settings stress test {rounds} times (toggle Wi-Fi, Airplane mode, Mobile data, "
                "Dark theme and Bluetooth, back to the main list after each screen), create the alarms "
                + "; ".join(f"{h}:{m:02d} {x.upper()} {lab}" for h, m, x, lab in ALARMS[:8])
                + ", and finally write a note titled \"Order to track\" whose text is \"Shop order "
                "<the order number you saw at checkout>, USB-C Cable and Phone Case\".",
        "secrets": SHOP_SECRETS,
        "description": "The order number is seen at step ~6 and typed again after ~200 steps.",
        "app": "com.artemis.shop",
        "max_steps": len(ref) + 40,
        "device": "sim",
        "sim": {"world": "default", "seed": seed, "popups": False},
        "tags": ["bench", "shop", "settings", "clock", "notes", "recall", "long"],
        "setup": [*SETTINGS_SETUP, {"shell": "am force-stop com.artemis.shop"},
                  {"shell": "am force-stop com.android.deskclock"}, CLOCK_GRANT, {"shell": "am force-stop com.artemis.notes"}],
        "success": [
            *settings_checks(rounds),
            {"shell": "content query --uri content://com.artemis.notes/notes --where \"title='Order to track'\"",
             "contains": f"body=Shop order {order}, USB-C Cable and Phone Case"},
            {"shell": "content query --uri content://com.artemis.shop/orders", "contains": order},
            *[alarm_check(*a) for a in ALARMS[:8]],
        ],
        "reference": ref,
    }


# -- bench-fact-recall: the fidelity probe's task ---------------------------------------------------
#
# Facts the agent SEES but never types (phone numbers and e-mails in Contacts, prices, an order
# number and total in the Shop, Display and About-phone values in Settings, a note's text), each
# on screen in one part of a ~520-step run and asked about at the end in natural language. The
# rest of the run is ordinary work (toggles, alarms, new contacts, notes) that pushes the early
# facts through every compression level of the default profile: 12-step chunks, eras after 8
# chunks (4 chunks each), period paragraphs after 8 eras, i.e. from ~41 chunks (~500 steps) on.

FACT_SEED = 73
FACT_DEVICE_SETUP = [
    {"shell": "settings put system screen_off_timeout 120000"},  # "After 2 minutes of inactivity"
    {"shell": "settings put system screen_brightness 166"},  # "65%"
]
SWIPE_UP = {"swipe": {"from": [540, 1020], "to": [540, 1900]}}
CONTACTS_LIST = {"swipe": {"from": [540, 1900], "to": [540, 1020]}}


def _price(name: str) -> str:
    from artemis_cli.sim.worlds.shop import PRODUCTS, money

    return money(dict(PRODUCTS)[name])


def _product_page(name: str) -> int:
    """The catalogue page (swipes of ``SWIPE`` from the top) on which ``name``'s row is in full view."""
    from artemis_cli.sim.worlds.shop import PRODUCTS

    index = [n for n, _ in PRODUCTS].index(name)
    return max(0, -(-(index - 7) // 4))


def _order_number(seed: int, order: int) -> str:
    return f"ART-{10000 + (seed % 5000) * 10 + order}"


def _order_total(items: list[tuple[str, int]]) -> str:
    from artemis_cli.sim.worlds.shop import PRODUCTS, money

    prices = dict(PRODUCTS)
    return money(sum(prices[n] * q for n, q in items))


def network_round() -> list[Action]:
    """Toggle the three network switches and Bluetooth (Display is left alone: its values are facts)."""
    return [*_network_switches(), *_bluetooth_switch()]


FACT_NEW_CONTACTS = [("Zoe", "Adler", "+1 555-0401"), ("Yusuf", "Bakr", "+1 555-0402"),
                     ("Xenia", "Costa", "+1 555-0403"), ("Walter", "Dunn", "+1 555-0404"),
                     ("Vera", "Engel", "+1 555-0405"), ("Umar", "Farouk", "+1 555-0406")]
FACT_ALARMS = [(5, 45, "am", "Early run"), (6, 20, "am", "Pills"), (7, 50, "am", "Bus"), (11, 10, "am", "Call bank"),
               (1, 35, "pm", "Nap"), (3, 25, "pm", "Tea"), (5, 5, "pm", "Gym"), (8, 40, "pm", "Read"),
               (9, 35, "pm", "Dishes"), (11, 20, "pm", "Sleep"), (6, 5, "am", "Yoga"), (8, 55, "am", "Email"),
               (12, 15, "pm", "Walk"), (4, 50, "pm", "Snack"), (7, 25, "pm", "Podcast"), (10, 45, "pm", "Journal")]
#: network rounds (8 steps each) in the three Settings stretches and after the second order
FACT_ROUNDS = (4, 10, 18, 8)
#: alarms added in the first and in the second Clock visit
FACT_ALARM_SPLIT = 6
FACT_NOTES = [("Packing list", "Passport, charger, socks, toothbrush"), ("Books", "Dune, Emma, Ulysses"),
              ("Garden", "Water the tomatoes on Friday"), ("Car", "Tyre pressure check next week")]
FIRST_ORDER = [("Mechanical Keyboard", 1), ("Noise Cancelling Headphones", 1), ("Smart Watch", 1),
               ("Microphone", 2)]
SECOND_ORDER = [("External SSD", 1), ("Gaming Controller", 2)]


def fact_recall_task(seed: int = FACT_SEED) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The task and its probe facts (question, value, the reference step whose screen shows it)."""
    ref: list[Action] = []
    facts: list[dict[str, Any]] = []

    def fact(fid: str, kind: str, question: str, value: str) -> None:
        # shown on the screen the agent sees at the next step (a step's UI is its pre-action screen)
        facts.append({"id": fid, "kind": kind, "question": question, "value": value, "planned_step": len(ref) + 1})

    def look_up(name: str, *, scroll: bool = False) -> None:
        if scroll:
            ref.append(CONTACTS_LIST)
        ref.append({"tap": {"desc": name}})

    def new_contacts(people: list[tuple[str, str, str]]) -> None:
        for first, last, phone in people:
            ref.extend([{"tap": {"desc": "Create contact"}},
                        {"type": {"text": first, "into": {"id": "first_name"}}},
                        {"type": {"text": last, "into": {"id": "last_name"}}},
                        {"type": {"text": phone, "into": {"id": "phone"}}},
                        {"tap": {"text": "Save"}}, {"key": "back"}])

    def shop(items: list[tuple[str, int]], page: int, price_facts: list[str]) -> int:
        for name, qty in items:
            while page < _product_page(name):
                ref.append(SWIPE)
                page += 1
            if name in price_facts:
                fact(f"price-{name.lower().replace(' ', '-')}", "price", f"What was the price of the {name}?",
                     _price(name))
            ref.extend([{"tap": {"desc": f"Add {name} to cart"}}] * qty)
        return page

    # -- 1. Contacts: three people looked up (early facts)
    ref.append({"launch": "com.android.contacts"})
    look_up("Grace Ito")
    fact("phone-grace-ito", "phone", "What is Grace Ito's phone number?", "+1 555-0107")
    ref.append({"key": "back"})
    look_up("Carla Diaz")
    fact("email-carla-diaz", "email", "What is Carla Diaz's email address?", "carla@example.com")
    ref.append({"key": "back"})
    look_up("Hannah Jones")
    fact("phone-hannah-jones", "phone", "What is Hannah Jones's phone number?", "+1 555-0108")
    ref.append({"key": "back"})
    new_contacts(FACT_NEW_CONTACTS[:3])
    # -- 2. Settings: Display and About phone values, then toggles
    ref += [{"key": "home"}, {"launch": "com.android.settings"}, {"tap": {"text": "Display"}}]
    fact("screen-timeout", "setting", "How long is the screen timeout set to in Display settings?", "2 minutes")
    fact("brightness", "setting", "What brightness level did Display settings show?", "65%")
    ref += [{"key": "back"}, {"tap": {"text": "About phone"}}]
    fact("build-number", "setting", "What is the phone's build number?", "AP1A.240305.019")
    ref.append({"key": "back"})
    for _ in range(FACT_ROUNDS[0]):
        ref += network_round()
    # -- 3. Shop: prices seen while filling the cart, the order number and total at checkout
    ref += [{"key": "home"}, {"launch": "com.artemis.shop"},
            {"type": {"text": "demo", "into": {"id": "username"}}},
            {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}}]
    page = shop(FIRST_ORDER, 0, ["Mechanical Keyboard", "Noise Cancelling Headphones", "Smart Watch",
                                 "Microphone"])
    ref.append({"tap": {"id": "cart_button"}})
    fact("order-total-1", "order", "What was the total of the first Shop order?", _order_total(FIRST_ORDER))
    ref.append({"tap": {"text": "Checkout"}})
    fact("order-number-1", "order", "What was the Shop order number shown at checkout?", _order_number(seed, 1))
    ref.append({"tap": {"text": "Continue shopping"}})
    # -- 4. Clock: alarms (typed work)
    ref += [{"key": "home"}, {"launch": "com.android.deskclock"}]
    for a in FACT_ALARMS[:FACT_ALARM_SPLIT]:
        ref += alarm_steps(*a)
    # -- 5. Notes: the seed notes are read, new ones written
    ref += [{"key": "home"}, {"launch": "com.artemis.notes"}]
    fact("note-meeting", "note", "What did the Meeting notes note say?", "Discuss Q3 roadmap with the team")
    for title, body in FACT_NOTES:
        ref += [{"tap": {"text": "New note"}}, {"type": {"text": title, "into": {"id": "title"}}},
                {"type": {"text": body, "into": {"id": "body"}}}, {"tap": {"desc": "Save note"}}]
    # -- 6. Settings toggles
    ref += [{"key": "home"}, {"launch": "com.android.settings"}]
    for _ in range(FACT_ROUNDS[1]):
        ref += network_round()
    # -- 7. Contacts again: three people further down the list (middle facts), more new contacts
    ref += [{"key": "home"}, {"launch": "com.android.contacts"}]
    look_up("Mohammed Okafor", scroll=True)
    fact("phone-mohammed-okafor", "phone", "What is Mohammed Okafor's phone number?", "+1 555-0113")
    ref.append({"key": "back"})
    look_up("Oscar Quinn")
    fact("email-oscar-quinn", "email", "What is Oscar Quinn's email address?", "oscar@example.com")
    ref.append({"key": "back"})
    look_up("Nina Petrova")
    fact("phone-nina-petrova", "phone", "What is Nina Petrova's phone number?", "+1 555-0114")
    ref += [{"key": "back"}, SWIPE_UP]
    new_contacts(FACT_NEW_CONTACTS[3:])
    # -- 8. Clock and Settings: more work
    ref += [{"key": "home"}, {"launch": "com.android.deskclock"}]
    for a in FACT_ALARMS[FACT_ALARM_SPLIT:]:
        ref += alarm_steps(*a)
    ref += [{"key": "home"}, {"launch": "com.android.settings"}]
    for _ in range(FACT_ROUNDS[2]):
        ref += network_round()
    # -- 9. Shop again: a second order (late facts)
    ref += [{"key": "home"}, {"launch": "com.artemis.shop"}]
    page = shop(SECOND_ORDER, page, ["External SSD", "Gaming Controller"])
    ref += [{"tap": {"id": "cart_button"}}, {"tap": {"text": "Checkout"}}]
    fact("order-number-2", "order", "What was the order number of the second Shop order?", _order_number(seed, 2))
    ref.append({"tap": {"text": "Continue shopping"}})
    # -- 10. A last stretch of toggles, so the late facts too leave the active window
    ref += [{"key": "home"}, {"launch": "com.android.settings"}]
    for _ in range(FACT_ROUNDS[3]):
        ref += network_round()
    ref.append({"finish": {"success": True, "answer": "Errands done: contacts, settings, two orders, alarms, notes"}})
    rounds = sum(FACT_ROUNDS)
    task = {
        "id": "bench-fact-recall",
        "goal": "Phone errands. In Contacts, open Grace Ito, Carla Diaz and Hannah Jones, then add "
                + "; ".join(f"{f} {la} {p}" for f, la, p in FACT_NEW_CONTACTS[:3])
                + ". In Settings look at Display and About phone, then toggle Wi-Fi, Airplane mode, Mobile data "
                f"(Network & internet) and Bluetooth (Connected devices) {FACT_ROUNDS[0]} times. In the Shop "
                "(username demo) order " + ", ".join(f"{q} {n}" for n, q in FIRST_ORDER)
                + ". In Clock add the alarms "
                + "; ".join(f"{h}:{m:02d} {x.upper()} {lab}" for h, m, x, lab in FACT_ALARMS[:FACT_ALARM_SPLIT])
                + ". In Notes write " + "; ".join(f'"{t}": "{b}"' for t, b in FACT_NOTES)
                + f". Toggle the same Settings switches {FACT_ROUNDS[1]} more times. In Contacts open Mohammed "
                "Okafor, Oscar Quinn and Nina Petrova, then add "
                + "; ".join(f"{f} {la} {p}" for f, la, p in FACT_NEW_CONTACTS[3:]) + ". Add the alarms "
                + "; ".join(f"{h}:{m:02d} {x.upper()} {lab}" for h, m, x, lab in FACT_ALARMS[FACT_ALARM_SPLIT:])
                + f", toggle the switches {FACT_ROUNDS[2]} more times, order "
                + ", ".join(f"{q} {n}" for n, q in SECOND_ORDER)
                + f" in the Shop, and toggle the switches {FACT_ROUNDS[3]} more times.",
        "secrets": SHOP_SECRETS,
        "description": "A long errand run over five apps; the fidelity probe asks about phone numbers, prices, "
                       "order numbers and settings values that were on screen and never typed.",
        "app": "com.android.contacts",
        "max_steps": len(ref) + 40,
        "device": "sim",
        "sim": {"world": "default", "seed": seed, "popups": False},
        "tags": ["bench", "contacts", "settings", "shop", "clock", "notes", "fidelity", "long"],
        "setup": [*FACT_DEVICE_SETUP, {"shell": "settings put global wifi_on 1"},
                  {"shell": "settings put global airplane_mode_on 0"}, {"shell": "settings put global mobile_data 1"},
                  {"shell": "settings put global bluetooth_on 0"},
                  *[{"shell": f"am force-stop {p}"} for p in ("com.android.contacts", "com.android.settings",
                                                               "com.artemis.shop", "com.android.deskclock",
                                                               "com.artemis.notes")], CLOCK_GRANT],
        "success": [
            {"shell": "settings get global wifi_on", "equals": "0" if rounds % 2 else "1"},
            {"shell": "settings get global bluetooth_on", "equals": "1" if rounds % 2 else "0"},
            {"shell": "content query --uri content://com.android.contacts/contacts | wc -l", "equals": "21"},
            {"shell": "content query --uri content://com.artemis.shop/orders", "contains": _order_number(seed, 2)},
            {"shell": "content query --uri content://com.artemis.notes/notes | wc -l", "equals": "7"},
            *[alarm_check(*a) for a in FACT_ALARMS],
        ],
        "reference": ref,
    }
    return task, facts


PROBE_FILE = "fidelity-probe.json"

TASKS = [clock_task, contacts_task, settings_task, shop_task, notes_task, recall_task]


def write_task(out: Path, task: dict[str, Any]) -> None:
    header = (f"# FROZEN bench task (artemis bench, SPEC §12): {len(task['reference'])} reference steps.\n"
              "# Generated by artemis_cli/bench/generate_suite.py; edit the generator, not this file.\n")
    text = yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=110)
    (out / f"{task['id']}.yaml").write_text(header + text, encoding="utf-8")
    print(f"{task['id']}: {len(task['reference'])} reference steps")


def probe_document(probes: dict[str, list[dict[str, Any]]]) -> str:
    doc = {
        "about": "Fidelity probe of the frozen bench suite (artemis bench, SPEC §12). Generated by "
                 "artemis_cli/bench/generate_suite.py; edit the generator, not this file. Each fact was on "
                 "screen (never typed) at about planned_step; the probe finds the step from the recorded UI "
                 "text and asks the question in natural language (artemis_cli/bench/fidelity.py).",
        "tasks": probes,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for make in TASKS:
        write_task(out, make())
    task, facts = fact_recall_task()
    write_task(out, task)
    (out / PROBE_FILE).write_text(probe_document({task["id"]: facts}), encoding="utf-8")
    print(f"{PROBE_FILE}: {len(facts)} facts")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "tasks/bench"))
