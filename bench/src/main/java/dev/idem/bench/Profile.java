package dev.idem.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Cuts the service's CPU profile of the HTTP part by step. async-profiler ran inside the service
 * with {@code loop=1s} and wrote one file of collapsed stacks per second, named after the second
 * it began, in local time (the service's and this program's). A step's seconds are those wholly
 * inside it, less the first (connections opening). For each step this writes the merged stacks
 * ({@code profile/<ramp>-c<N>.collapsed}, for a flame graph) and the service's CPU per request,
 * split into kernel, native and Java frames, with the frames that took most ({@code profile.json}).
 */
final class Profile {

    private static final DateTimeFormatter FILE_TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    private static final String[] RAMPS = {"keyFirst", "callbacksFirst", "duplicates", "bare", "keyReplay"};
    private static final int TOP_FRAMES = 12;

    private Profile() {}

    static void run(Args args) throws IOException {
        Path dir = Path.of(args.get("dir"));
        double intervalMs = Double.parseDouble(args.get("interval-ms"));
        JsonObject http = new JsonObject(Files.readString(dir.resolve("http.json")));
        Map<Long, Path> seconds = seconds(dir.resolve("profile"));
        JsonArray steps = new JsonArray();
        for (String ramp : RAMPS) {
            JsonObject r = http.getJsonObject(ramp);
            if (r == null) {
                continue;
            }
            for (Object o : r.getJsonArray("steps")) {
                JsonObject step = (JsonObject) o;
                steps.add(step(dir, ramp, step, seconds, intervalMs));
            }
        }
        Files.writeString(dir.resolve("profile.json"),
                new JsonObject().put("intervalMs", intervalMs).put("steps", steps).encodePrettily());
    }

    private static JsonObject step(Path dir, String ramp, JsonObject step, Map<Long, Path> seconds,
                                   double intervalMs) throws IOException {
        long start = Instant.parse(step.getString("startedAt")).getEpochSecond();
        long end = start + (long) Math.floor(step.getDouble("seconds"));
        Map<String, Long> stacks = new HashMap<>();
        int sampled = 0;
        for (long s = start + 2; s < end; s++) {
            Path file = seconds.get(s);
            if (file != null) {
                sampled++;
                read(file, stacks);
            }
        }
        JsonObject result = new JsonObject().put("ramp", ramp).put("concurrency", step.getInteger("concurrency"))
                .put("secondsSampled", sampled);
        double rate = step.getDouble("perSecond");
        if (sampled == 0 || rate <= 0) {
            return result;
        }
        // one sample stands for intervalMs of CPU: µs of service CPU per answered request
        double perRequest = intervalMs * 1000 / sampled / rate;
        Map<String, Double> kinds = new TreeMap<>();
        Map<String, Double> self = new HashMap<>();
        long samples = 0;
        for (Map.Entry<String, Long> e : stacks.entrySet()) {
            String leaf = e.getKey().substring(e.getKey().lastIndexOf(';') + 1);
            kinds.merge(kind(leaf), e.getValue() * perRequest, Double::sum);
            self.merge(leaf, e.getValue() * perRequest, Double::sum);
            samples += e.getValue();
        }
        JsonObject byKind = new JsonObject();
        kinds.forEach((k, v) -> byKind.put(k, Load.round(v, 1)));
        JsonArray top = new JsonArray();
        self.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(TOP_FRAMES)
                .forEach(e -> top.add(new JsonObject().put("frame", e.getKey()).put("us", Load.round(e.getValue(), 2))));
        write(dir.resolve("profile").resolve(ramp + "-c" + step.getInteger("concurrency") + ".collapsed"), stacks);
        return result.put("samples", samples).put("perSecond", rate)
                .put("serviceCpuUsPerRequest", Load.round(samples * perRequest, 1))
                .put("byKind", byKind).put("topSelfFrames", top);
    }

    /** Kernel frames carry async-profiler's {@code _[k]}; Java frames name a class with slashes. */
    private static String kind(String frame) {
        if (frame.endsWith("_[k]")) {
            return "kernel";
        }
        return frame.contains("/") ? "java" : "native";
    }

    private static Map<Long, Path> seconds(Path dir) throws IOException {
        Map<Long, Path> files = new HashMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            list.filter(p -> p.getFileName().toString().endsWith(".collapsed")).forEach(p -> {
                String name = p.getFileName().toString();
                try {
                    files.put(LocalDateTime.parse(name.substring(0, 15), FILE_TIME)
                            .atZone(ZoneId.systemDefault()).toEpochSecond(), p);
                } catch (RuntimeException notASecond) {
                    // a step's merged file from an earlier cut
                }
            });
        }
        return files;
    }

    private static void read(Path file, Map<String, Long> stacks) throws IOException {
        try (Stream<String> lines = Files.lines(file)) {
            lines.forEach(line -> {
                int space = line.lastIndexOf(' ');
                if (space > 0) {
                    stacks.merge(line.substring(0, space), Long.parseLong(line.substring(space + 1)), Long::sum);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private static void write(Path file, Map<String, Long> stacks) throws IOException {
        List<String> lines = new ArrayList<>();
        stacks.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> lines.add(e.getKey() + " " + e.getValue()));
        Files.write(file, lines);
    }
}
