package dev.idem.extension.it;

import jakarta.enterprise.context.ApplicationScoped;

/** A bug in a work, present until a test fixes it; while present the work throws {@link Broken}. */
@ApplicationScoped
public class Bug {

    private volatile boolean present;

    void introduce() {
        present = true;
    }

    void fix() {
        present = false;
    }

    void strike(String where) {
        if (present) {
            throw new Broken(where + " has a bug");
        }
    }

    /** What the buggy work throws. */
    public static final class Broken extends RuntimeException {
        Broken(String message) {
            super(message);
        }
    }
}
