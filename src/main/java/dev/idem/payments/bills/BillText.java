package dev.idem.payments.bills;

import dev.idem.orders.PaymentGateway;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** What reading either gateway's bill file needs: its text, its rows and columns, times, and its hash. */
public final class BillText {

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withResolverStyle(ResolverStyle.STRICT);
    /** The gateways' longest identifiers are far shorter; idem stores up to this. */
    private static final int MAX_ID = 128;

    private BillText() {}

    /** The file's text in {@code charset}, or empty when it is not text in it. */
    public static Optional<String> decode(byte[] file, Charset charset) {
        try {
            String text = charset.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(file)).toString();
            return Optional.of(text.startsWith("\uFEFF") ? text.substring(1) : text);
        } catch (CharacterCodingException notText) {
            return Optional.empty();
        }
    }

    /** Its non-blank rows, without their line ends. */
    public static List<String> rows(String text) {
        return text.lines().filter(row -> !row.isBlank()).toList();
    }

    /** A header's column names, trimmed, with their positions. */
    public static Map<String, Integer> columns(String[] header) {
        Map<String, Integer> columns = new LinkedHashMap<>();
        for (int i = 0; i < header.length; i++) {
            columns.put(header[i].trim(), i);
        }
        return columns;
    }

    /** {@code yyyy-MM-dd HH:mm:ss} in China's time, as both gateways write it. */
    public static Optional<Instant> time(String text) {
        try {
            return Optional.of(LocalDateTime.parse(text, TIME).atZone(Bill.GATEWAY_TIME).toInstant());
        } catch (DateTimeParseException notATime) {
            return Optional.empty();
        }
    }

    /** A line whose identifiers idem can store and, for a payment, whose amount is positive. */
    public static Optional<Bill.Line> line(Bill.Kind kind, String orderId, String tradeNo, long amountCents, Instant at,
                                           String state, String refundNo, long refundCents) {
        if (kind == Bill.Kind.OTHER) {
            return Optional.of(new Bill.Line(kind, orderId, tradeNo, amountCents, at, state, refundNo, refundCents));
        }
        if (!storable(orderId) || !storable(tradeNo) || kind == Bill.Kind.PAYMENT && amountCents < 1) {
            return Optional.empty();
        }
        Bill.Line line = new Bill.Line(kind, orderId, tradeNo, amountCents, at, state, refundNo, refundCents);
        return kind == Bill.Kind.PAYMENT && line.payment().violation().isPresent() ? Optional.empty() : Optional.of(line);
    }

    private static boolean storable(String id) {
        return !id.isEmpty() && id.length() <= MAX_ID && id.chars().allMatch(c -> c > 0x20 && c < 0x7f);
    }

    public static BillRead valid(PaymentGateway gateway, LocalDate date, List<Bill.Line> lines) {
        return new BillRead.Valid(new Bill(gateway, date, List.copyOf(lines)));
    }

    /**
     * Why {@code file} does not match the hash the gateway declared ({@code SHA1=<hex>}, the
     * algorithm as WeChat Pay names it), or empty when it matches.
     */
    public static Optional<String> hashMismatch(String declared, byte[] file) {
        int eq = declared.indexOf('=');
        if (eq < 1) {
            return Optional.of("the bill's hash must be given as <algorithm>=<hex>, e.g. SHA1=...");
        }
        String algorithm = declared.substring(0, eq).trim().toUpperCase(Locale.ROOT);
        String jdkName = switch (algorithm) {
            case "SHA1", "SHA-1" -> "SHA-1";
            case "SHA256", "SHA-256" -> "SHA-256";
            default -> null;
        };
        if (jdkName == null) {
            return Optional.of("the bill's hash algorithm " + algorithm + " is not one idem checks (SHA1)");
        }
        try {
            String actual = HexFormat.of().formatHex(MessageDigest.getInstance(jdkName).digest(file));
            return actual.equalsIgnoreCase(declared.substring(eq + 1).trim())
                    ? Optional.empty()
                    : Optional.of("the bill's " + algorithm + " does not match its content: it was changed or cut short");
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
