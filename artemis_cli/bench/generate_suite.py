"""Writes the frozen bench suite ``tasks/bench/*.yaml`` (run once; the YAML is what is committed).

    python -m artemis_cli.bench.generate_suite tasks/bench
"""

from __future__ import annotations

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


def settings_round() -> list[Action]:
    return [
        {"tap": {"text": "Network & internet"}},
        {"tap": {"id": "wifi_switch"}},
        {"tap": {"id": "airplane_switch"}},
        {"tap": {"id": "mobile_data_switch"}},
        {"key": "back"},
        {"tap": {"text": "Display"}},
        {"tap": {"id": "dark_theme_switch"}},
        {"key": "back"},
        {"tap": {"text": "Connected devices"}},
        {"tap": {"id": "bluetooth_switch"}},
        {"key": "back"},
    ]


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
        "sim": {"world": "default", "seed": 12, "popups": False},
        "tags": ["bench", "clock", "typing", "long"],
        "setup": [{"shell": "am force-stop com.android.deskclock"}],
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


def shop_task() -> dict[str, Any]:
    ref: list[Action] = [
        {"type": {"text": "demo", "into": {"id": "username"}}},
        {"type": {"text": "artemis123", "into": {"id": "password"}, "submit": True}},
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
        "goal": "Log in to the Shop with the demo account (demo / artemis123) and order: "
                + ", ".join(f"{q} {n}" for n, q, _ in SHOP_ITEMS) + ". Check out when the cart is complete.",
        "description": "Twelve products found by scrolling the whole catalogue; promotion pop-ups on.",
        "app": "com.artemis.shop",
        "max_steps": len(ref) + 40,
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
                "summarises the week and mentions Kenji's number.",
        "description": "Revisits earlier screens and writes notes (save_note); a contact fact reused later.",
        "app": "com.artemis.notes",
        "max_steps": len(ref) + 30,
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
        {"type": {"text": "artemis123", "into": {"id": "password"}, "submit": True}},
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
        "goal": "Order one USB-C Cable and one Phone Case in the Shop (demo / artemis123) and check out. "
                f"Then do the Settings stress test {rounds} times (toggle Wi-Fi, Airplane mode, Mobile data, "
                "Dark theme and Bluetooth, back to the main list after each screen), create the alarms "
                + "; ".join(f"{h}:{m:02d} {x.upper()} {lab}" for h, m, x, lab in ALARMS[:8])
                + ", and finally write a note titled \"Order to track\" whose text gives the Shop order "
                "number you saw at checkout and what was in the order.",
        "description": "The order number is seen at step ~6 and typed again after ~200 steps.",
        "app": "com.artemis.shop",
        "max_steps": len(ref) + 40,
        "sim": {"world": "default", "seed": seed, "popups": False},
        "tags": ["bench", "shop", "settings", "clock", "notes", "recall", "long"],
        "setup": [*SETTINGS_SETUP, {"shell": "am force-stop com.artemis.shop"},
                  {"shell": "am force-stop com.android.deskclock"}, {"shell": "am force-stop com.artemis.notes"}],
        "success": [
            *settings_checks(rounds),
            {"shell": "content query --uri content://com.artemis.notes/notes --where \"title='Order to track'\"",
             "contains": f"body=Shop order {order}, USB-C Cable and Phone Case"},
            {"shell": "content query --uri content://com.artemis.shop/orders", "contains": order},
            *[alarm_check(*a) for a in ALARMS[:8]],
        ],
        "reference": ref,
    }


TASKS = [clock_task, contacts_task, settings_task, shop_task, notes_task, recall_task]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for make in TASKS:
        task = make()
        header = (f"# FROZEN bench task (artemis bench, SPEC §12): {len(task['reference'])} reference steps.\n"
                  "# Generated by artemis_cli/bench/generate_suite.py; edit the generator, not this file.\n")
        text = yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=110)
        (out / f"{task['id']}.yaml").write_text(header + text, encoding="utf-8")
        print(f"{task['id']}: {len(task['reference'])} reference steps")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "tasks/bench"))
