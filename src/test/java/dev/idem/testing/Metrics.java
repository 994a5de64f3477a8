package dev.idem.testing;

import static io.restassured.RestAssured.given;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Reads counters from the Prometheus endpoint, as an operator's scraper would. */
public final class Metrics {

    private final String text;

    private Metrics(String text) {
        this.text = text;
    }

    public static Metrics scrape() {
        return new Metrics(given().get("/q/metrics").then().statusCode(200).extract().asString());
    }

    /** The sum of every series of {@code name} carrying all of {@code tags}; 0 when none exists. */
    public double value(String name, Map<String, String> tags) {
        return series(name)
                .filter(line -> tags.entrySet().stream()
                        .allMatch(tag -> line.contains(tag.getKey() + "=\"" + tag.getValue() + "\"")))
                .mapToDouble(Metrics::sample)
                .sum();
    }

    /** A line's value: its last field, once an exemplar (" # {trace_id=…} 1.0 …", a traced increment's) is cut off. */
    private static double sample(String line) {
        int exemplar = line.indexOf(" # ");
        String series = exemplar < 0 ? line : line.substring(0, exemplar);
        return Double.parseDouble(series.substring(series.lastIndexOf(' ') + 1));
    }

    /** The values {@code tag} takes across the series of {@code name}. */
    public Set<String> tagValues(String name, String tag) {
        Pattern value = Pattern.compile("[{,]" + Pattern.quote(tag) + "=\"([^\"]*)\"");
        return series(name)
                .map(value::matcher)
                .filter(Matcher::find)
                .map(matcher -> matcher.group(1))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The lines of {@code name}'s series, with or without tags. */
    private Stream<String> series(String name) {
        return text.lines().filter(line -> line.startsWith(name + "{") || line.startsWith(name + " "));
    }

    public long delta(Metrics before, String name, Map<String, String> tags) {
        return Math.round(value(name, tags) - before.value(name, tags));
    }

    /** How many of {@code gateway}'s notifications were counted as {@code notice} since {@code before}. */
    public long notices(Metrics before, String gateway, String notice) {
        return delta(before, "idem_gateway_notifications_total", Map.of("gateway", gateway, "notice", notice));
    }
}
