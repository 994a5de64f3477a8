package dev.idem.bench;

/** One progress line on stderr, rewritten in place on a terminal, every few seconds otherwise. */
final class Progress {

    private static final boolean TERMINAL = System.console() != null;
    private static long lastPrinted;

    private Progress() {}

    static synchronized void line(String text) {
        if (TERMINAL) {
            System.err.print("\r  " + text + "\033[K");
            System.err.flush();
            return;
        }
        long now = System.nanoTime();
        if (now - lastPrinted >= 5_000_000_000L) {
            lastPrinted = now;
            System.err.println("  .. " + text);
        }
    }

    static synchronized void done(String text) {
        if (TERMINAL) {
            System.err.print("\r  " + text + "\033[K\n");
        } else {
            System.err.println("  " + text);
        }
        System.err.flush();
        lastPrinted = 0;
    }

    static synchronized void say(String text) {
        if (TERMINAL) {
            System.err.print("\r\033[K");
        }
        System.err.println("bench: " + text);
        System.err.flush();
    }
}
