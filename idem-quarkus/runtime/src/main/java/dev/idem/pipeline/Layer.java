package dev.idem.pipeline;

/** Where a duplicate was caught: the cheaper the layer, the earlier it answers. */
public enum Layer {
    REDIS, DB, STATE;

    /** The layer as it is tagged in {@code idem_pipeline_duplicates_total}: redis, db or state. */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
