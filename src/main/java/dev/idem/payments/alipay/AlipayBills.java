package dev.idem.payments.alipay;

import dev.idem.orders.PaymentGateway;
import dev.idem.payments.Yuan;
import dev.idem.payments.bills.Bill;
import dev.idem.payments.bills.BillRead;
import dev.idem.payments.bills.BillText;
import dev.idem.payments.bills.GatewayBills;
import dev.idem.payments.query.GatewayHttp;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Singleton;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.charset.Charset;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Alipay's trade bill: {@code alipay.data.dataservice.bill.downloadurl.query} with
 * {@code bill_type=trade} answers, signed by Alipay, an address valid for a moment; the download
 * is a zip of CSV files in GBK, of which the business detail (业务明细) lists the day's trades and
 * refunds between comment lines, and ends with the number of each.
 */
@Singleton
public class AlipayBills implements GatewayBills {

    static final String METHOD = "alipay.data.dataservice.bill.downloadurl.query";
    static final String RESPONSE = "alipay_data_dataservice_bill_downloadurl_query_response";
    static final Charset GBK = Charset.forName("GBK");
    /** No day's detail comes near this once unzipped; a file that does is refused, not read. */
    static final long MAX_UNZIPPED = 1L << 30;
    private static final String HEADER = "支付宝交易号";
    private static final String ORDER_ID = "商户订单号";
    private static final String TYPE = "业务类型";
    private static final String CREATED = "创建时间";
    private static final String FINISHED = "完成时间";
    private static final String AMOUNT = "订单金额（元）";
    private static final String REFUND_NO = "退款批次号/请求号";
    private static final Pattern TOTALS = Pattern.compile("#交易合计：(\\d+)笔，退款合计：(\\d+)笔.*");

    private final AlipayQuery api;
    private final GatewayHttp http;

    AlipayBills(AlipayQuery api, GatewayHttp http) {
        this.api = api;
        this.http = http;
    }

    @Override
    public PaymentGateway gateway() {
        return PaymentGateway.ALIPAY;
    }

    @Override
    public boolean on() {
        return api.on();
    }

    @Override
    public Optional<String> cannotFetch() {
        return api.canAsk() ? Optional.empty() : Optional.of("fetching Alipay's bill needs "
                + "idem.gateways.alipay.app-private-key; or give the downloaded zip as the body");
    }

    @Override
    public Uni<BillRead> fetch(LocalDate date) {
        return api.call(METHOD, new JsonObject().put("bill_type", "trade").put("bill_date", date.toString()))
                .chain(answer -> {
                    if (answer.status() != 200) {
                        return Uni.createFrom().item(new BillRead.Unavailable("Alipay answered HTTP " + answer.status()));
                    }
                    Optional<AlipayResponse> response = AlipayResponse.read(answer.body(), RESPONSE);
                    if (response.isEmpty()) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer has no " + RESPONSE));
                    }
                    if (!api.signedByAlipay(response.get())) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer's sign does not verify"));
                    }
                    JsonObject content = new JsonObject(new String(response.get().content(), StandardCharsets.UTF_8));
                    String code = content.getString("code");
                    if (!"10000".equals(code)) {
                        String sub = content.getString("sub_code");
                        return Uni.createFrom().item("isp.bill_not_exist".equals(sub)
                                ? new BillRead.Missing("Alipay answered " + sub)
                                : new BillRead.Unavailable("Alipay answered " + code + " " + sub));
                    }
                    URI url;
                    try {
                        url = URI.create(content.getString("bill_download_url"));
                    } catch (RuntimeException unreadable) {
                        return Uni.createFrom().item(new BillRead.Invalid("the answer names no bill_download_url"));
                    }
                    return http.send(HttpMethod.GET, url, Map.of(), null).map(file -> file.status() == 200
                            ? (BillRead) new BillRead.Downloaded(file.body(), Optional.empty())
                            : new BillRead.Unavailable("the bill's download answered HTTP " + file.status()));
                })
                .onFailure().recoverWithItem(failure -> new BillRead.Unavailable("Alipay did not answer: " + failure));
    }

    @Override
    public BillRead read(LocalDate date, byte[] file) {
        Optional<String> detail;
        try {
            detail = detail(file);
        } catch (IOException | IllegalArgumentException notAZip) {
            return new BillRead.Invalid("the bill is not a zip that opens: " + notAZip.getMessage());
        }
        return detail.map(csv -> parse(date, csv))
                .orElseGet(() -> new BillRead.Invalid("the zip holds no business detail (" + HEADER + " …) in GBK"));
    }

    /** The business detail's text: the zip's GBK file whose rows include the trades' header. */
    private static Optional<String> detail(byte[] zip) throws IOException {
        long unzipped = 0;
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip), GBK)) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, MAX_UNZIPPED - unzipped + 1));
                unzipped += bytes.length;
                if (unzipped > MAX_UNZIPPED) {
                    throw new IOException("it unzips to more than " + MAX_UNZIPPED + " bytes");
                }
                Optional<String> text = BillText.decode(bytes, GBK);
                if (text.isPresent() && !entry.getName().contains("汇总")
                        && BillText.rows(text.get()).stream().anyMatch(row -> row.startsWith(HEADER))) {
                    return text;
                }
            }
        }
        return Optional.empty();
    }

    /** The detail, read whole or not at all. */
    static BillRead parse(LocalDate date, String csv) {
        List<String> rows = BillText.rows(csv);
        int header = 0;
        while (header < rows.size() && !rows.get(header).startsWith(HEADER)) {
            header++;
        }
        if (header == rows.size()) {
            return new BillRead.Invalid("the detail has no header row");
        }
        String[] names = rows.get(header).split(",", -1);
        Map<String, Integer> columns = BillText.columns(names);
        for (String needed : List.of(HEADER, ORDER_ID, TYPE, CREATED, FINISHED, AMOUNT, REFUND_NO)) {
            if (!columns.containsKey(needed)) {
                return new BillRead.Invalid("the header has no column " + needed);
            }
        }
        List<Bill.Line> lines = new ArrayList<>();
        int trades = 0;
        int refunds = 0;
        int row = header + 1;
        for (; row < rows.size() && !rows.get(row).startsWith("#"); row++) {
            String[] values = rows.get(row).split(",", -1);
            if (values.length != names.length) {
                return new BillRead.Invalid("line " + (row + 1) + " has " + values.length + " values, the header "
                        + names.length);
            }
            Optional<Bill.Line> line = line(values, columns);
            if (line.isEmpty()) {
                return new BillRead.Invalid("line " + (row + 1) + " does not read: a time, an amount or a number is wrong");
            }
            trades += line.get().kind() == Bill.Kind.PAYMENT ? 1 : 0;
            refunds += line.get().kind() == Bill.Kind.REFUND ? 1 : 0;
            lines.add(line.get());
        }
        Optional<Matcher> totals = rows.subList(row, rows.size()).stream()
                .map(TOTALS::matcher).filter(Matcher::matches).findFirst();
        if (totals.isEmpty()) {
            return new BillRead.Invalid("the detail does not end with its totals (#交易合计): the file is cut short");
        }
        if (Integer.parseInt(totals.get().group(1)) != trades || Integer.parseInt(totals.get().group(2)) != refunds) {
            return new BillRead.Invalid("the totals count " + totals.get().group(1) + " trades and " + totals.get().group(2)
                    + " refunds, the detail has " + trades + " and " + refunds);
        }
        return BillText.valid(PaymentGateway.ALIPAY, date, lines);
    }

    private static Optional<Bill.Line> line(String[] values, Map<String, Integer> columns) {
        String type = value(values, columns, TYPE);
        Bill.Kind kind = switch (type) {
            case "交易" -> Bill.Kind.PAYMENT;
            case "退款" -> Bill.Kind.REFUND;
            default -> Bill.Kind.OTHER;
        };
        String amount = value(values, columns, AMOUNT);
        // a refund's amounts are written negative
        OptionalLong read = Yuan.cents(kind == Bill.Kind.REFUND && amount.startsWith("-") ? amount.substring(1) : amount);
        OptionalLong cents = kind == Bill.Kind.OTHER && read.isEmpty() ? OptionalLong.of(0) : read;
        String finished = value(values, columns, FINISHED);
        return BillText.time(finished.isEmpty() ? value(values, columns, CREATED) : finished)
                .flatMap(at -> cents.isEmpty() ? Optional.empty() : BillText.line(kind, value(values, columns, ORDER_ID),
                        value(values, columns, HEADER), cents.getAsLong(), at, type,
                        kind == Bill.Kind.REFUND ? value(values, columns, REFUND_NO) : "",
                        kind == Bill.Kind.REFUND ? cents.getAsLong() : 0));
    }

    /** Alipay pads its values with tabs and spaces. */
    private static String value(String[] values, Map<String, Integer> columns, String column) {
        return values[columns.get(column)].trim();
    }
}
