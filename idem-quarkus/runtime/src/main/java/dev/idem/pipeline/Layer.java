package dev.idem.pipeline;

/** Where a duplicate was caught: the cheaper the layer, the earlier it answers. */
public enum Layer {
    REDIS, DB, STATE;

    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
