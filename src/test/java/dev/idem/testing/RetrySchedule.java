package dev.idem.testing;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A gateway's retries: the first delivery at once, then one after each delay of its schedule,
 * until an answer it reads as "received". The delays are divided by {@code compression}, so that
 * a day of retries takes seconds; each delivery is built just before it leaves (signed afresh).
 */
public final class RetrySchedule {

    /** One delivery: its number (1 for the first), the gateway's delay before it, and the answer. */
    public record Attempt(int number, Duration after, int status, String body) {}

    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    private final List<Duration> delays;

    public RetrySchedule(List<Duration> delays) {
        this.delays = List.copyOf(delays);
    }

    public List<Duration> delays() {
        return delays;
    }

    /** The attempts made; {@code afterEach} sees each answer before the gateway waits for the next. */
    public List<Attempt> deliver(Supplier<HttpRequest> delivery, Predicate<Attempt> received, long compression,
                                 Consumer<Attempt> afterEach) {
        List<Attempt> attempts = new ArrayList<>();
        for (int number = 1; number <= delays.size() + 1; number++) {
            Duration after = number == 1 ? Duration.ZERO : delays.get(number - 2);
            pause(after, compression);
            Attempt attempt = send(number, after, delivery.get());
            attempts.add(attempt);
            afterEach.accept(attempt);
            if (received.test(attempt)) {
                break;
            }
        }
        return attempts;
    }

    private static Attempt send(int number, Duration after, HttpRequest request) {
        try {
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            return new Attempt(number, after, response.statusCode(), response.body());
        } catch (java.io.IOException noAnswer) {
            // no answer is not "received": the gateway retries
            return new Attempt(number, after, -1, noAnswer.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The gateway's own wait between deliveries, compressed; no test waits on it for an effect. */
    private static void pause(Duration delay, long compression) {
        try {
            TimeUnit.NANOSECONDS.sleep(delay.toNanos() / compression);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
