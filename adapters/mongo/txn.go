package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"
)

// txnKey marks a context whose operations run inside a transaction.
type txnKey struct{}

func inTxn(ctx context.Context) bool { return ctx.Value(txnKey{}) != nil }

// writeTxn runs fn in a transaction when the saver was configured with
// WithTransactions, and directly otherwise. The driver retries fn on
// transient transaction errors, so fn must be idempotent; the saver's
// writes are.
func (s *Saver) writeTxn(ctx context.Context, fn func(ctx context.Context) error) error {
	if !s.txn {
		return fn(ctx)
	}
	sess, err := s.client.StartSession()
	if err != nil {
		return wrapErr(ctx, "start session", err)
	}
	defer sess.EndSession(context.WithoutCancel(ctx))
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		return nil, fn(context.WithValue(sc, txnKey{}, true))
	})
	if err != nil {
		return wrapErr(ctx, "transaction", err)
	}
	return nil
}

// upsertAll replaces or inserts docs, whose _ids are keys, in one
// BulkWrite. Inside a transaction it replaces insertOrReplace and
// insertChunks: there, a duplicate-key error would abort the whole
// transaction instead of being something to step over.
func upsertAll(ctx context.Context, coll *mongo.Collection, docs []any, keys []string) error {
	if len(docs) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(docs))
	for i, d := range docs {
		models[i] = mongo.NewReplaceOneModel().
			SetFilter(bson.D{{Key: "_id", Value: keys[i]}}).SetReplacement(d).SetUpsert(true)
	}
	_, err := coll.BulkWrite(ctx, models, mopts.BulkWrite().SetOrdered(true))
	return err
}
