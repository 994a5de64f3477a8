package dev.idem.payments.wechatpay;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.Yuan;
import dev.idem.payments.bills.Bill;
import dev.idem.payments.bills.BillRead;
import dev.idem.payments.bills.GatewayBills;
import dev.idem.payments.bills.BillText;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Singleton;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * WeChat Pay API v3's trade bill ({@code bill_type=ALL}): {@code GET /v3/bill/tradebill?bill_date=}
 * signed as the merchant answers, signed by WeChat Pay, the file's download address and its hash;
 * the download (not signed: the hash is what vouches for it) is a CSV whose header names the
 * columns, every value prefixed with a backtick, amounts in yuan, and after the lines a summary
 * whose first figure is the number of lines.
 */
@Singleton
public class WeChatPayBills implements GatewayBills {

    static final String PATH = "/v3/bill/tradebill";
    private static final String SUMMARY = "总交易单数";
    private static final String TIME = "交易时间";
    private static final String TRADE_NO = "微信订单号";
    private static final String ORDER_ID = "商户订单号";
    private static final String STATE = "交易状态";
    private static final String SETTLED = "应结订单金额";
    private static final String AMOUNT = "订单金额";
    private static final String REFUND_NO = "微信退款单号";
    private static final String REFUND = "退款金额";

    private final WeChatPayQuery api;

    WeChatPayBills(WeChatPayQuery api) {
        this.api = api;
    }

    @Override
    public PaymentGateway gateway() {
        return PaymentGateway.WECHATPAY;
    }

    @Override
    public boolean on() {
        return api.on();
    }

    @Override
    public Optional<String> cannotFetch() {
        return api.canAsk() ? Optional.empty() : Optional.of("fetching WeChat Pay's bill needs "
                + "idem.gateways.wechatpay.mchid, .merchant-serial and .merchant-private-key; or give the "
                + "downloaded file as the body");
    }

    @Override
    public Uni<BillRead> fetch(LocalDate date) {
        return api.get(PATH + "?bill_date=" + date + "&bill_type=ALL")
                .chain(answer -> {
                    if (answer.status() != 200) {
                        return Uni.createFrom().item(refusal(answer.status(), WeChatPayQuery.code(answer.body())));
                    }
                    WeChatPaySignature.Check check = api.verify(answer);
                    if (check != WeChatPaySignature.Check.VALID) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer is not WeChat Pay's: " + check.message));
                    }
                    JsonObject download;
                    URI url;
                    try {
                        download = new JsonObject(new String(answer.body(), StandardCharsets.UTF_8));
                        url = URI.create(download.getString("download_url"));
                    } catch (RuntimeException unreadable) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer names no download_url"));
                    }
                    if (!api.sameApi(url)) {
                        return Uni.createFrom().item(new BillRead.Invalid("the download address is not WeChat Pay's API"));
                    }
                    if (download.getString("hash_type") == null || download.getString("hash_value") == null) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer gives no hash: the download, "
                                + "which WeChat Pay does not sign, could not be checked"));
                    }
                    Optional<String> hash = Optional.of(download.getString("hash_type") + "=" + download.getString("hash_value"));
                    return api.getSigned(url).map(file -> file.status() == 200
                            ? (BillRead) new BillRead.Downloaded(file.body(), hash)
                            : refusal(file.status(), WeChatPayQuery.code(file.body())));
                })
                .onFailure().recoverWithItem(failure -> new BillRead.Unavailable("WeChat Pay did not answer: " + failure));
    }

    private static BillRead refusal(int status, String code) {
        if ("NO_STATEMENT_EXIST".equals(code) || "STATEMENT_CREATING".equals(code)) {
            return new BillRead.Missing("WeChat Pay answered " + code);
        }
        return new BillRead.Unavailable("WeChat Pay answered " + status + " " + code);
    }

    @Override
    public BillRead read(LocalDate date, byte[] file) {
        Optional<String> text = BillText.decode(file, StandardCharsets.UTF_8);
        return text.map(csv -> parse(date, csv)).orElseGet(() -> new BillRead.Invalid("the bill is not UTF-8 text"));
    }

    /** The CSV, read whole or not at all. */
    static BillRead parse(LocalDate date, String csv) {
        List<String> rows = BillText.rows(csv);
        if (rows.isEmpty()) {
            return new BillRead.Invalid("the bill is empty");
        }
        Map<String, Integer> columns = BillText.columns(rows.get(0).split(",", -1));
        for (String needed : List.of(TIME, TRADE_NO, ORDER_ID, STATE, SETTLED, REFUND_NO, REFUND)) {
            if (!columns.containsKey(needed)) {
                return new BillRead.Invalid("the header has no column " + needed);
            }
        }
        String amountColumn = columns.containsKey(AMOUNT) ? AMOUNT : SETTLED;
        List<Bill.Line> lines = new ArrayList<>();
        int row = 1;
        for (; row < rows.size() && !rows.get(row).startsWith(SUMMARY); row++) {
            String text = rows.get(row);
            if (!text.startsWith("`")) {
                return new BillRead.Invalid("line " + (row + 1) + " is no bill line: its values are not prefixed with `");
            }
            String[] values = text.substring(1).split(",`", -1);
            if (values.length != columns.size()) {
                return new BillRead.Invalid("line " + (row + 1) + " has " + values.length + " values, the header "
                        + columns.size());
            }
            Optional<Bill.Line> line = line(values, columns, amountColumn);
            if (line.isEmpty()) {
                return new BillRead.Invalid("line " + (row + 1) + " does not read: a time, an amount or a number is wrong");
            }
            lines.add(line.get());
        }
        if (row + 2 != rows.size()) {
            return new BillRead.Invalid("the bill does not end with its summary: the file is cut short or has more after it");
        }
        // the documentation's examples do not settle whether refunds count: either is taken
        String counted = rows.get(row + 1).replace("`", "").split(",", -1)[0].trim();
        long payments = lines.stream().filter(line -> line.kind() == Bill.Kind.PAYMENT).count();
        long refunds = lines.stream().filter(line -> line.kind() == Bill.Kind.REFUND).count();
        if (!List.of(String.valueOf(lines.size()), String.valueOf(payments), String.valueOf(payments + refunds))
                .contains(counted)) {
            return new BillRead.Invalid("the summary counts " + counted + " lines, the bill has " + lines.size());
        }
        return BillText.valid(PaymentGateway.WECHATPAY, date, lines);
    }

    private static Optional<Bill.Line> line(String[] values, Map<String, Integer> columns, String amountColumn) {
        String state = values[columns.get(STATE)].trim();
        Bill.Kind kind = switch (state) {
            case "SUCCESS" -> Bill.Kind.PAYMENT;
            case "REFUND" -> Bill.Kind.REFUND;
            default -> Bill.Kind.OTHER;
        };
        OptionalLong amount = Yuan.cents(values[columns.get(amountColumn)].trim());
        OptionalLong settled = Yuan.cents(values[columns.get(SETTLED)].trim());
        OptionalLong refund = Yuan.cents(values[columns.get(REFUND)].trim());
        return BillText.time(values[columns.get(TIME)].trim()).flatMap(at -> amount.isEmpty() || settled.isEmpty() || refund.isEmpty()
                ? Optional.empty()
                : BillText.line(kind, values[columns.get(ORDER_ID)].trim(), values[columns.get(TRADE_NO)].trim(),
                        amount.getAsLong(), at, state, values[columns.get(REFUND_NO)].trim(), refund.getAsLong()));
    }
}
