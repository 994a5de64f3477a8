package dev.idem.bench;

import java.util.HashMap;
import java.util.Map;

/** {@code --name value} pairs. */
final class Args {

    private final Map<String, String> values;

    private Args(Map<String, String> values) {
        this.values = values;
    }

    static Args parse(String[] argv) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("expected --name value, got " + argv[i]);
            }
            values.put(argv[i].substring(2), argv[++i]);
        }
        return new Args(values);
    }

    /** One side of a comparison: the options named {@code prefix}… without it, over those of neither side. */
    Args side(String prefix) {
        Map<String, String> side = new HashMap<>();
        values.forEach((name, value) -> {
            if (!name.matches("[ab]-.*")) {
                side.put(name, value);
            }
        });
        values.forEach((name, value) -> {
            if (name.startsWith(prefix)) {
                side.put(name.substring(prefix.length()), value);
            }
        });
        return new Args(side);
    }

    String get(String name) {
        String value = values.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return value;
    }

    String get(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    int integer(String name) {
        return Integer.parseInt(get(name));
    }

    long number(String name, long fallback) {
        String value = values.get(name);
        return value == null || value.isBlank() ? fallback : Long.parseLong(value);
    }
}
