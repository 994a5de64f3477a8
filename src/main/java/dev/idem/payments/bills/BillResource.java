package dev.idem.payments.bills;

import dev.idem.web.Json;
import dev.idem.web.Problem;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The gateways' daily bills, for operators ({@code /admin}: the admin token is needed): import a
 * day's bill, fetched from the gateway or given as the file it gave for download, and read the
 * last import's report.
 */
@Path("/admin/reconciliation/gateways")
@Produces(MediaType.APPLICATION_JSON)
public class BillResource {

    /** The header that carries the hash the gateway gave with a file, {@code SHA1=<hex>}. */
    public static final String HASH_HEADER = "X-Bill-Hash";
    private static final Duration RETRY_AFTER = Duration.ofSeconds(30);
    private static final int MAX_LATEST = 100;

    private final BillImports imports;

    BillResource(BillImports imports) {
        this.imports = imports;
    }

    /** No body: fetched from the gateway. A body: the file as downloaded (WeChat Pay's CSV, Alipay's zip). */
    @POST
    @Path("/{gateway}/bills")
    @Consumes(MediaType.WILDCARD)
    public Uni<Response> importBill(@PathParam("gateway") String gateway, @QueryParam("date") String date,
                                    @HeaderParam(HASH_HEADER) String hash, byte[] body) {
        return with(gateway, date, (bills, day) -> {
            Optional<byte[]> file = Optional.ofNullable(body).filter(bytes -> bytes.length > 0);
            if (file.isEmpty() && bills.cannotFetch().isPresent()) {
                return Uni.createFrom().item(Problem.badRequest(bills.cannotFetch().get()));
            }
            return imports.importBill(bills, day, file, Optional.ofNullable(hash).filter(h -> !h.isBlank()))
                    .map(BillResource::answer)
                    .onFailure().recoverWithItem(failure -> {
                        Log.warnf("Import of the %s bill of %s not finished: %s", gateway, day, failure.toString());
                        return Problem.retryLater(503, "SERVICE_UNAVAILABLE", "the import could not finish; "
                                + "what it applied stays applied, and importing the bill again finishes it", RETRY_AFTER);
                    });
        });
    }

    @GET
    @Path("/{gateway}/bills/{date}")
    public Uni<Response> report(@PathParam("gateway") String gateway, @PathParam("date") String date) {
        return with(gateway, date, (bills, day) -> imports.report(bills, day).map(found -> found
                .map(Json::ok)
                .orElseGet(() -> Problem.response(404, "BILL_NOT_FOUND", "no bill of that day was imported"))));
    }

    /**
     * The last imports' reports, every gateway's, newest first (the console's list). Below
     * {@code /gateways}: a resource class at {@code /admin/reconciliation} would take that path's
     * own requests from {@code AdminResource}.
     */
    @GET
    @Path("/bills")
    public Uni<Response> latest(@QueryParam("limit") Integer limit) {
        int count = limit == null ? 10 : limit;
        if (count < 1 || count > MAX_LATEST) {
            return Uni.createFrom().item(Problem.badRequest("limit must be from 1 to " + MAX_LATEST));
        }
        return imports.latest(count).map(reports -> Json.ok(new JsonObject().put("bills", new JsonArray(reports))));
    }

    private Uni<Response> with(String gateway, String date, BiFunction<GatewayBills, LocalDate, Uni<Response>> work) {
        Optional<GatewayBills> bills = imports.gateway(gateway);
        if (bills.isEmpty()) {
            return Uni.createFrom().item(Problem.response(404, "GATEWAY_NOT_FOUND",
                    "no gateway of that name is on: wechatpay or alipay, with its keys set"));
        }
        LocalDate day;
        try {
            day = LocalDate.parse(date == null ? "" : date);
        } catch (DateTimeParseException e) {
            return Uni.createFrom().item(Problem.badRequest("the date must be given as YYYY-MM-DD"));
        }
        return work.apply(bills.get(), day);
    }

    private static Response answer(BillImports.Result result) {
        if (result instanceof BillImports.Result.Imported imported) {
            return Json.ok(imported.report());
        }
        BillRead why = ((BillImports.Result.NotImported) result).why();
        if (why instanceof BillRead.Invalid invalid) {
            return Problem.response(400, "BILL_INVALID", invalid.reason() + "; nothing of it was applied");
        }
        if (why instanceof BillRead.Missing missing) {
            return Problem.response(404, "BILL_NOT_FOUND", "the gateway has no bill of that day: " + missing.reason());
        }
        return Problem.retryLater(503, "GATEWAY_UNAVAILABLE", ((BillRead.Unavailable) why).reason(), RETRY_AFTER);
    }
}
