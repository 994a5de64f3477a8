package dev.idem.testing;

import static io.restassured.RestAssured.given;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        double sum = 0;
        for (String line : text.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean matches = tags.entrySet().stream()
                    .allMatch(tag -> line.contains(tag.getKey() + "=\"" + tag.getValue() + "\""));
            if (matches) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** The values {@code tag} takes across the series of {@code name}. */
    public Set<String> tagValues(String name, String tag) {
        Pattern value = Pattern.compile("[{,]" + Pattern.quote(tag) + "=\"([^\"]*)\"");
        Set<String> values = new TreeSet<>();
        for (String line : text.split("\n")) {
            Matcher matcher = value.matcher(line);
            if (line.startsWith(name + "{") && matcher.find()) {
                values.add(matcher.group(1));
            }
        }
        return values;
    }

    public long delta(Metrics before, String name, Map<String, String> tags) {
        return Math.round(value(name, tags) - before.value(name, tags));
    }
}
