"""Device backends: the simulated phone, adb (adbutils) and u2 (uiautomator2)."""
